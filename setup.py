"""The one part of the build pyproject.toml cannot declare: the optional compiled walks of the
`best` preset (corpusbuilder/extraction/: the segmentation walk _walk.pyx, against lxml's
headers, the tree walk _trees.pyx, the block features _features.pyx and jusText's classes
_classes.pyx, sharing the inline helpers of _text.pxd and _sums.pxd) and the quality stage's
compiled word cut, line tests and n-gram signals (corpusbuilder/quality/_cut.pyx, _lines.pyx,
_ngrams.pyx, sharing the hashes of _hashing.pxd).

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
            self._skip("the compiled walks were", error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 — the compiler failed: same as none
            self._skip(f"the compiled module {ext.name} was", error)

    def _skip(self, what, error):
        self.warn(
            f"corpusbuilder: {what} not built ({error}); the package runs the same code in "
            "Python, with the same results, more slowly (the `best` preset about 2.1x slower "
            "without its four modules; the quality stage without its three, slower too)"
        )


setup(
    ext_modules=cythonize(
        [
            Extension(
                "corpusbuilder.extraction._walk",
                ["corpusbuilder/extraction/_walk.pyx"],
                include_dirs=lxml.get_include(),
                depends=["corpusbuilder/extraction/_text.pxd"],
            ),
            *(
                Extension(
                    f"corpusbuilder.extraction.{name}",
                    [f"corpusbuilder/extraction/{name}.pyx"],
                    depends=[f"corpusbuilder/extraction/{pxd}.pxd" for pxd in pxds],
                )
                for name, pxds in (
                    ("_trees", ("_sums",)),
                    ("_features", ("_sums", "_text")),
                    ("_classes", ("_text",)),
                )
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
