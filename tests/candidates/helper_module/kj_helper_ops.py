"""A helper module beside a candidate."""


def addmul(x, y):
    return x * y + x
