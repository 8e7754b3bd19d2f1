"""Small BERTs pre-trained from scratch.

Importing this package registers the model type "flairsuite_bert" with transformers' Auto classes, so Flair and
transformers load relative/WWA models without trust_remote_code: at once where transformers is already imported,
otherwise right after its first import (a one-time hook on `import transformers`). So `import flairsuite.bert`
followed by `AutoModel.from_pretrained(folder)` works as before, while a command that only reads
`flairsuite.bert.settings` (`train-bert --help`) does not pay for importing transformers and torch.
"""

import importlib.util
import sys
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, Optional, Sequence

TRANSFORMERS = "transformers"


def _register() -> None:
    from flairsuite.bert.registration import register

    register()


class _RegisteringLoader(Loader):
    """transformers' own loader, registering the classes once the package has run."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> Optional[ModuleType]:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register()

    def __getattr__(self, name: str) -> Any:  # resource readers and the like: the wrapped loader's
        return getattr(self._loader, name)


class _AfterTransformers(MetaPathFinder):
    """Finds `transformers` as the other finders do, with a loader that registers afterwards; removes itself."""

    def find_spec(self, name: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None) -> Optional[ModuleSpec]:
        if name != TRANSFORMERS:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


if TRANSFORMERS in sys.modules:
    _register()
elif not any(isinstance(finder, _AfterTransformers) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AfterTransformers())
