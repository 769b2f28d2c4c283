"""The one part of the build pyproject.toml cannot declare: the optional compiled walks of the
`best` preset (corpusbuilder/extraction/_fastpath.pyx, against lxml's headers) and the quality
stage's compiled word cut, line tests and n-gram signals (corpusbuilder/quality/_cut.pyx,
_lines.pyx, _ngrams.pyx, sharing the hashes of _hashing.pxd).

Without a C compiler or Python's headers the build warns and goes on without them; the package
then runs the same walks in Python, with the same results, more slowly.
"""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that lets the package install without its compiled part."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # noqa: BLE001 — no compiler: the pure-Python package still works
            self._skip(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 — the compiler failed: same as none
            self._skip(error)

    def _skip(self, error):
        self.warn(
            f"corpusbuilder: the compiled walks were not built ({error}); "
            "the `best` preset runs its Python walks, with the same results, about 2.1x slower"
        )


setup(
    ext_modules=cythonize(
        [
            Extension(
                "corpusbuilder.extraction._fastpath",
                ["corpusbuilder/extraction/_fastpath.pyx"],
                include_dirs=lxml.get_include(),
            ),
            *(
                Extension(
                    f"corpusbuilder.quality.{name}",
                    [f"corpusbuilder/quality/{name}.pyx"],
                    depends=["corpusbuilder/quality/_hashing.pxd"],
                )
                for name in ("_cut", "_lines", "_ngrams")
            ),
        ],
        compiler_directives={"language_level": 3},
    ),
    cmdclass={"build_ext": OptionalBuildExt},
)
