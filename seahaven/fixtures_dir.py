"""Moved to ``seahaven.fixtures.location``; importing this path warns and gives that module."""

from seahaven.moved import alias_module

alias_module(__name__)
