"""Small reusable widgets (filter fields, badges) shared by docks and tools."""
