"""Pydantic base classes shared by every API model.

Kubernetes objects are camelCase on the wire and snake_case here. Karpenter's CRD types are
strict (``extra="forbid"``: a misspelt field is an error, as the API server's schema makes it);
objects read from ``kubectl get -o json`` carry many fields nodewright does not model, so those
ignore extras. Every model is frozen: computations derive new values, never mutate inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr
from pydantic.alias_generators import to_camel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_setattr = object.__setattr__


def replaced(model: M, update: Mapping[str, Any]) -> M:
    """``model.model_copy(update=update)`` (a shallow copy, ``update`` set unvalidated, its keys
    counted as set) for models that forbid or ignore extra fields, without pydantic's generic
    steps: a forecast re-binds pods tens of thousands of times."""
    new = _new(type(model))
    fields = model.__dict__.copy()
    fields.update(update)
    _setattr(new, "__dict__", fields)
    extra = model.__pydantic_extra__
    _setattr(new, "__pydantic_extra__", None if extra is None else extra.copy())
    _setattr(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys())
    private = getattr(model, "__pydantic_private__", None)
    _setattr(new, "__pydantic_private__", None if private is None else private.copy())
    return new


class KubeModel(BaseModel):
    """A lenient Kubernetes model: unknown fields ignored (kubectl output is much richer)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="ignore",
        str_strip_whitespace=False,
        # validators are built on first use: a command that never builds a Pod does not pay for
        # the Pod model's schema at import (drift, health: ~0.1 s of their start-up)
        defer_build=True,
    )

    def to_k8s(self) -> dict[str, Any]:
        """The object as Kubernetes would serialise it: camelCase, unset fields omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class StrictModel(KubeModel):
    """A CRD model: unknown fields are errors, as Karpenter's CRD schema makes them."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
        defer_build=True,
    )


class TopLevel(KubeModel):
    """A top-level object that remembers where it was read from (for error messages)."""

    _file: str = PrivateAttr(default="<input>")
    _path: str = PrivateAttr(default="")
    _written: Mapping[str, Any] | None = PrivateAttr(default=None)
    _stored: Mapping[str, Any] | None = PrivateAttr(default=None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__private_attributes__.keys() == _PRIVATE_DEFAULTS.keys():
            cls.model_post_init = _init_private  # type: ignore[method-assign]

    def set_origin(self, file: str, path: str) -> None:
        private = self._private()
        private["_file"] = file
        private["_path"] = path

    def set_bodies(self, written: Mapping[str, Any], stored: Mapping[str, Any]) -> None:
        """Remember the object as written and as the API server stores it (pruned, defaulted)."""
        private = self._private()
        private["_written"] = written
        private["_stored"] = stored

    def _private(self) -> dict[str, Any]:
        private = self.__pydantic_private__
        assert private is not None  # set by model_post_init on every instance
        return private

    @property
    def written_body(self) -> Mapping[str, Any] | None:
        """The object exactly as read from its file (None when built in code)."""
        return self._written

    @property
    def stored_body(self) -> Mapping[str, Any] | None:
        """The object as the cluster stores it: CRD defaults applied, unknown fields and nulls
        pruned (:func:`nodewright.crd.admit_object`); None when built in code."""
        return self._stored

    @property
    def origin_file(self) -> str:
        return self._file

    def origin_path(self, sub: str = "") -> str:
        if not sub:
            return self._path
        if not self._path:
            return sub
        return f"{self._path}{sub}" if sub.startswith("[") else f"{self._path}.{sub}"


_PRIVATE_DEFAULTS: Final[dict[str, Any]] = {
    "_file": "<input>",
    "_path": "",
    "_written": None,
    "_stored": None,
}
"""TopLevel's private attributes and their defaults (the PrivateAttr declarations above)."""


def _init_private(self: BaseModel, context: Any, /) -> None:
    """pydantic's private-attribute initialisation of a TopLevel model, without its per-attribute
    default look-ups (tens of thousands of pods and nodes a cluster state: a tenth of reading it)."""
    if getattr(self, "__pydantic_private__", None) is None:
        object.__setattr__(self, "__pydantic_private__", _PRIVATE_DEFAULTS.copy())


if TopLevel.__private_attributes__.keys() == _PRIVATE_DEFAULTS.keys():
    TopLevel.model_post_init = _init_private  # type: ignore[method-assign]
