"""`cuenv tui`: an interactive terminal browser of environments and recipes (issue 9).

Textual is a dependency of cuenv, imported only by cuenv.commands.tui when the command runs
(start-up of every other command stays light). models.py and services.py import no Textual.
"""
