"""Heat's ``heat.common.i18n``: the translation markers plugins wrap their
texts in. nestedflow does not translate; the text is returned as written."""


def _(message):
    return message


_LI = _LW = _LE = _LC = _
