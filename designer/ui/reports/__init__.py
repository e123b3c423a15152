"""Report documents shown as main-window tabs: profile tables, charts and the timeline."""
