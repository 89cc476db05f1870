"""Constants of the conformance suite shared by its conftest.py and test files."""

NAMESPACE = "fake-project-id"  # the project (and database) firebase-admin is pointed at
