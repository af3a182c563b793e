"""Run-length encoding of text. See the task description for the format."""


def encode(text):
    raise NotImplementedError


def decode(code):
    raise NotImplementedError
