"""Pieces shared by several system models."""
