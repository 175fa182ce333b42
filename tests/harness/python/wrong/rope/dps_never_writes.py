"""Planted wrong candidate: destination-passing entry that never writes its output."""


def run(q, cos, sin, out):
    return None
