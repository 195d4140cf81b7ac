from cuenv.cli import entry

entry()
