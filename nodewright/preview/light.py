"""The light path through pulumi's mock runtime: the same registrations, a fraction of the work.

Boundary: ``nodewright preview`` runs the program under the mocks only to collect what it registers
(type, name, inputs with secret markers, parent, dependencies, options) and the stack outputs. The
full path (:class:`~nodewright.preview.mocks.CapturingMonitor` with pulumi's ``MockMonitor``) pays,
per resource, for work nobody reads. While :func:`light_runtime` is active:

* :class:`LightMonitor` answers ``RegisterResource`` in place: the response is the request's own
  inputs plus the mocked computed fields (:func:`~nodewright.preview.mocks.computed_state`), not a
  deserialize -> ``Mocks.new_resource`` -> serialize round trip on its own event loop;
* monitor calls run inline on the program's event loop (:class:`_InlineExecutor`), not on a worker
  thread (invokes and reads keep pulumi's own code, on a thread of their own);
* a resource's output properties are resolved on demand (:class:`_LazyOutput`): each is derived, as
  ``rpc.resolve_outputs`` would derive it, the first time something reads it (an ``apply``, an input
  of another resource, an export); the thousands nobody reads (every property of every launch
  template) are never converted.

Real ``pulumi preview``/``up`` never come here. What differs from the full path, in output
properties only (the mocks echo a resource's inputs back as its outputs; the engine would answer
with the provider's): a conversion error in a property nobody reads is not raised, and a map-valued
property a program reads back may list its keys in another order (the full path's order is that of
protobuf's re-serialized copy). nodewright's program reads back no map. tests/preview/test_light_path.py
runs stacks both ways and compares every registration byte for byte (key order too), the stack
outputs, the invokes, and every property of every resource.

Every private pulumi attribute this relies on is listed in :data:`PRIVATE_API`; when a pulumi
release lacks one, :func:`missing_light_api` names it and the preview takes the full path with one
warning (correct, slower), and a test fails so the change is seen in CI.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from google.protobuf import struct_pb2  # type: ignore[import-untyped]
from pulumi import _types as _pulumi_types
from pulumi import output as _pulumi_output
from pulumi.runtime import mocks as _pulumi_mocks
from pulumi.runtime import resource as _pulumi_resource
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import settings as _settings
from pulumi.runtime.proto import resource_pb2

from nodewright.preview.mocks import CapturingMonitor, RecordedRegistration, computed_state

# (module, attribute): the private pulumi API the light path reads or replaces.
PRIVATE_API: tuple[tuple[Any, str], ...] = (
    (_rpc, "transfer_properties"),
    (_pulumi_resource, "create_urn"),
    (_rpc, "resolve_outputs"),
    (_rpc, "deserialize_property"),
    (_rpc, "translate_output_properties"),
    (_rpc, "is_rpc_secret"),
    (_rpc, "unwrap_rpc_secret"),
    (_rpc, "_Path"),
    (_rpc, "_special_sig_key"),
    (_pulumi_types, "resource_types"),
    (_pulumi_types, "resource_pulumi_to_py_names"),
    (_pulumi_output, "_OutputData"),
    (_pulumi_output.Output, "_track"),
    (_pulumi_output.Output, "_untrack"),
    (_pulumi_mocks.MockMonitor, "make_urn"),
    (_pulumi_mocks.MockMonitor, "ResourceRegistration"),
)


def missing_light_api() -> list[str]:
    """The private pulumi (and asyncio) attributes the light path needs that are missing here."""
    out = [f"{_owner(owner)}.{attr}" for owner, attr in PRIVATE_API if not hasattr(owner, attr)]
    loop = asyncio.new_event_loop()
    try:
        if not hasattr(loop, "_default_executor"):
            out.append("asyncio.BaseEventLoop._default_executor")
    finally:
        loop.close()
    return out


def _owner(owner: Any) -> str:
    return f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type) else str(owner.__name__)


class LightMonitor(CapturingMonitor):
    """Records each registration and answers it without pulumi's serialization round trip."""

    def __init__(self, mocks: Any) -> None:
        super().__init__(mocks)
        self._helper = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nodewright-invoke")
        self._answers: dict[str, Any] = {}

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        # a copy, as CapturingMonitor keeps: a Struct's key order (the report's and -o json's) is the
        # order of its copy, not always the request's own
        obj = struct_pb2.Struct()
        obj.CopyFrom(request.object)

        def has(key: str) -> bool:  # set in the inputs MockMonitor would hand the mocks
            return key in obj and _rpc.deserialize_property(obj[key]) is not None

        rid, computed = computed_state(request.type, request.name, custom=bool(request.custom), has=has)
        response = resource_pb2.RegisterResourceResponse(urn=urn, id=rid or "")
        response.object.CopyFrom(obj)
        if computed:
            response.object.update(computed)
        # the mocks' state, decoded only if the program looks a resource up by URN (_invoke)
        self.resources[urn] = self.ResourceRegistration(urn, rid, None)  # type: ignore[arg-type]
        self._answers[urn] = response.object
        reg = RecordedRegistration(
            type=request.type,
            name=request.name,
            urn=urn,
            parent=request.parent,
            custom=bool(request.custom),
            object=obj,
            protect=bool(request.protect),
            dependencies=tuple(sorted(request.dependencies)),
            provider=request.provider,
        )
        with self._reg_lock:
            self.registrations.append(reg)
        return response

    # pulumi's own answers, on a thread of their own (they run an event loop of their own, as they
    # do on the full path's worker threads)
    def Invoke(self, request: Any) -> Any:
        return self._helper.submit(self._invoke, request).result()

    def _invoke(self, request: Any) -> Any:
        if request.tok == "pulumi:pulumi:getResource":  # a resource looked up by URN: its state
            for urn, reg in list(self.resources.items()):
                if reg.state is None and urn in self._answers:
                    state = _rpc.deserialize_properties(self._answers[urn])
                    self.resources[urn] = self.ResourceRegistration(urn, reg.id, state)
        return super().Invoke(request)  # type: ignore[no-untyped-call]

    def ReadResource(self, request: Any) -> Any:
        return self._helper.submit(super().ReadResource, request).result()

    def close(self) -> None:
        self._helper.shutdown(wait=True)


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs each submitted call at once on the calling thread (the event loop's): the light monitor's
    answers are cheap, and a thread hop per resource cost more than the answer."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exn:  # handed to the awaiting coroutine, as a worker thread would
            done.set_exception(exn)
        return done


_NOTHING: Any = object()


class _Resolution:
    """What ``rpc.resolve_outputs`` was handed for one resource; each property is derived from it
    when first read (:func:`_derive`)."""

    __slots__ = (
        "by_type", "deps", "dry_run", "in_keys", "inputs_fallback", "keep_unknowns", "missing_unknown",
        "out_keys", "outputs", "res", "serialized", "translate_to_pass", "types",
    )  # fmt: skip

    def __init__(
        self,
        res: Any,
        serialized: Any,
        outputs: Any,
        deps: Any,
        *,
        by_type: bool,
        keep_unknowns: bool,
        missing_unknown: bool,
    ) -> None:
        cls = type(res)
        self.res, self.serialized, self.outputs = res, serialized, outputs
        self.keep_unknowns, self.missing_unknown, self.by_type = keep_unknowns, missing_unknown, by_type
        self.types = _pulumi_types.resource_types(cls)
        translate: Callable[[str], str] = res.translate_output_property
        self.translate_to_pass: Callable[[str], str] = res.translate_output_property
        if by_type:
            names = _pulumi_types.resource_pulumi_to_py_names(cls)

            def translate(prop: str) -> str:
                return names.get(prop) or prop

            def keep(prop: str) -> str:
                return prop

            self.translate_to_pass = keep
        self.dry_run = _settings.is_dry_run()
        self.inputs_fallback = not self.dry_run or bool(_settings.is_legacy_apply_enabled())  # type: ignore[no-untyped-call]
        self.out_keys: dict[str, list[str]] = {}
        for key in outputs:
            self.out_keys.setdefault(translate(key), []).append(key)
        self.in_keys: dict[str, list[str]] = {}
        if self.inputs_fallback:
            for key in serialized:
                self.in_keys.setdefault(translate(key), []).append(key)
        self.deps = {translate(k): v for k, v in deps.items()}


def _derive(r: _Resolution, name: str) -> tuple[Any, bool, bool, Any]:
    """``(value, known, secret, deps)`` of property ``name``: ``rpc.resolve_outputs`` (the outputs
    win, the last non-null of the keys naming it; else the first input naming it) then
    ``rpc.resolve_properties``, for this one property."""
    value = _NOTHING
    for key in r.out_keys.get(name, ()):
        v = _rpc.deserialize_property(r.outputs[key], r.keep_unknowns)
        if v is not None:
            path = _rpc._Path(name, resource=f"{r.res._name}")
            value = _rpc.translate_output_properties(
                v, r.translate_to_pass, r.types.get(key), r.by_type, path=path
            )
    if value is _NOTHING and r.in_keys.get(name):
        key = r.in_keys[name][0]
        value = _rpc.translate_output_properties(
            _rpc.deserialize_property(r.serialized[key]),
            r.translate_to_pass,
            r.types.get(key),
            r.by_type,
            path=_rpc._Path(name, resource=f"{r.res._name}"),
            return_none_on_dict_type_mismatch=True,
        )
    deps = r.deps.get(name)
    if value is _NOTHING:
        return None, not r.dry_run and not r.missing_unknown, False, deps
    secret = bool(_rpc.is_rpc_secret(value))
    unwrapped = _rpc.unwrap_rpc_secret(value)
    return unwrapped, True if not r.dry_run else unwrapped is not None, secret, deps


class _LazyOutput(_pulumi_output.Output[Any]):
    """A resource's output property whose value is derived (and its future made) when first read."""

    def __init__(self, res: Any, name: str, loop: asyncio.AbstractEventLoop) -> None:  # no future until read
        self._res = res
        self._name = name
        self._loop = loop  # the loop pulumi would have made this property's futures on
        self._fut: asyncio.Future[Any] | None = None
        self._tracked = True
        self._given: tuple[Any, ...] | None = (
            None  # ("resolved", value, known, secret, deps, exn) | ("later", r)
        )

    @property
    def _data(self) -> asyncio.Future[Any]:  # type: ignore[override]
        fut = self._fut
        if fut is None:
            fut = self._fut = self._loop.create_future()
            if self._tracked:
                self._track()
            if self._given is not None:
                self._settle(fut, self._given)
        return fut

    def _untrack(self) -> None:
        """A derived output answers for this one (``apply``): before it was read, it is simply never
        tracked (pulumi's ``_untrack`` reads ``_data`` under the lock ``_track`` takes)."""
        if self._fut is None:
            self._tracked = False
        else:
            super()._untrack()

    def resolve(self, value: Any, known: bool, secret: bool, deps: Any, exn: Exception | None) -> None:
        """The resolver pulumi calls (``rpc.resolve_outputs_due_to_exception``, the full fallback)."""
        self._given = ("resolved", value, known, secret, deps, exn)
        if self._fut is not None:
            self._settle(self._fut, self._given)

    def later(self, resolution: _Resolution) -> None:
        self._given = ("later", resolution)
        if self._fut is not None:
            self._settle(self._fut, self._given)

    def _settle(self, fut: asyncio.Future[Any], given: tuple[Any, ...]) -> None:
        if given[0] == "later":
            try:
                value, known, secret, deps = _derive(given[1], self._name)
            except Exception as exn:  # what resolve_outputs would have failed the resource with
                fut.set_exception(exn)
                return
        else:
            _, value, known, secret, deps, failed = given
            if failed is not None:
                fut.set_exception(failed)
                return
        resources = set(deps) if deps else set()
        resources.add(self._res)
        fut.set_result(
            _pulumi_output._OutputData(resources=resources, value=value, is_known=known, is_secret=secret)
        )


class _LazyResolvers(dict[str, Any]):
    """``rpc.transfer_properties``' answer: property name -> resolver (each lazy output's ``resolve``)."""

    def __init__(self, outputs: dict[str, _LazyOutput]) -> None:
        super().__init__({k: v.resolve for k, v in outputs.items()})
        self.outputs = outputs


def _transfer_properties(res: Any, props: Any, custom: bool) -> dict[str, Any]:
    """``rpc.transfer_properties``: one lazy output per input property (``urn`` and a custom
    resource's ``id`` are pulumi's own)."""
    outputs: dict[str, _LazyOutput] = {}
    attrs = res.__dict__
    loop = asyncio.get_event_loop()
    for name in props:
        if name == "urn" or (name == "id" and custom):
            continue
        outputs[name] = attrs[name] = _LazyOutput(res, name, loop)
    return _LazyResolvers(outputs)


def _resolve_outputs(full: Callable[..., None]) -> Callable[..., None]:
    def resolve_outputs(
        res: Any,
        serialized_props: Any,
        outputs: Any,
        deps: Any,
        resolvers: Any,
        custom: bool,
        transform_using_type_metadata: bool = False,
        keep_unknowns: bool = False,
        resolve_missing_as_unknown: bool = False,
    ) -> None:
        if not isinstance(resolvers, _LazyResolvers) or _rpc._special_sig_key in outputs:
            full(
                res, serialized_props, outputs, deps, resolvers, custom,
                transform_using_type_metadata, keep_unknowns, resolve_missing_as_unknown,
            )  # fmt: skip
            return
        r = _Resolution(
            res,
            serialized_props,
            outputs,
            deps,
            by_type=transform_using_type_metadata,
            keep_unknowns=bool(keep_unknowns),
            missing_unknown=resolve_missing_as_unknown,
        )
        for output in resolvers.outputs.values():
            output.later(r)

    return resolve_outputs


def _create_urn(full: Callable[..., Any]) -> Callable[..., Any]:
    """``resource.create_urn``, at once for plain strings (``register_resource`` asks it for every
    resource, for a URN only a monitor-less run would use): the string pulumi's chain of outputs
    computes, known, not secret, depending on nothing."""

    def create_urn(
        name: Any, type_: Any, parent: Any = None, project: str | None = None, stack: str | None = None
    ) -> Any:
        if type(name) is str and type(type_) is str and type(parent) is str:
            return _pulumi_output.Output.from_input(
                parent[0 : parent.rfind("::")] + "$" + type_ + "::" + name
            )
        return full(name, type_, parent, project, stack)

    return create_urn


_active = threading.Lock()


@contextlib.contextmanager
def light_runtime(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Lazy output properties and inline monitor calls on ``loop`` while the program runs; restored
    after (one light run at a time in a process)."""
    with _active:
        saved = (_rpc.transfer_properties, _rpc.resolve_outputs, _pulumi_resource.create_urn)
        executor = loop._default_executor  # type: ignore[attr-defined]
        _rpc.transfer_properties = _transfer_properties
        _rpc.resolve_outputs = _resolve_outputs(saved[1])
        _pulumi_resource.create_urn = _create_urn(saved[2])
        loop._default_executor = _InlineExecutor(max_workers=1)  # type: ignore[attr-defined]
        try:
            yield
        finally:
            _rpc.transfer_properties, _rpc.resolve_outputs, _pulumi_resource.create_urn = saved
            loop._default_executor = executor  # type: ignore[attr-defined]
