"""Placeholder package file copied into the MicroPython filesystem."""
