"""Lexicons: word pairs, attribute catalogues, names and other data files, with their loaders.

HInter's bias dictionary lives in :mod:`fairprobe.lexicons.dictionary`; candidate pairs can be
mined from a Social Bias Frames CSV with :mod:`fairprobe.lexicons.sbic`.
"""
