"""Dialogs of the designer window."""
