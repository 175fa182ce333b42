"""Planted broken candidate: does not parse."""


class Model(
