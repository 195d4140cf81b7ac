"""One module per command: ``configure(parser, name)`` adds its arguments, ``run(ctx)`` returns a Result.

Modules import heavy things (yaml, rattler, textual) inside ``run``, never at the top.
"""
