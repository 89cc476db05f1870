"""The functions suite: Hearth's functions against real parts (webhook endpoints checked with
the `standardwebhooks` package). Its helpers are in functions_support.py."""
