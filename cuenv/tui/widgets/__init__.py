"""The TUI's widgets: the machine bar, the environments view and the recipes view."""
