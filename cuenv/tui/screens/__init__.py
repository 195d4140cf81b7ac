"""Modal screens of the TUI (cuenv.tui.screens.modals)."""
