"""The operations suite: online backups, restores to a moment of a database's history, and a
disk that fills up, tried against real `hearth serve` processes and the `hearth` command line.
Its helpers are in operations_support.py."""
