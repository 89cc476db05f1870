"""The operations suite: online backups, restores to a moment of a database's history, a disk
that fills up, and hosting releases (deploy, rollback, --keep, a killed deploy, two cluster nodes
on one files folder), tried against real `hearth serve` processes and the `hearth` command line.
Its helpers are in operations_support.py."""
