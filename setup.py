"""Builds the optional C extension; everything else is declared in pyproject.toml.

``log_engine.records._record_check`` is the broker's per-record structural check
(see log_engine/records/record_check.py). It is optional: when no compiler is
available the install still succeeds and the pure-Python fallback is used.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "log_engine.records._record_check",
            sources=["log_engine/records/_record_check.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
