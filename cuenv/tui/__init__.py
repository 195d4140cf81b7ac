"""`cuenv tui`: an interactive terminal browser of environments and recipes (issue 9).

Textual is an optional extra (``pip install 'cuenv[tui]'``) and is imported only by
cuenv.commands.tui when the command runs. models.py and services.py import no Textual.
"""
