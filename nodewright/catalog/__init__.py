"""The instance-type catalog: what nodes can be launched, their capacity, overhead and prices.

Public API:

* :class:`Offering`, :class:`InstanceType`, :class:`Overhead`, :class:`Catalog` (model);
* :func:`load_catalog` (``aws:<region>`` or an ``InstanceTypeCatalog`` file, shaped by resolved
  :class:`NodeClassOptions`; :func:`nodewright.userdata.nodeclass_options` resolves them from an
  EC2NodeClass), :func:`apply_kubelet`;
* :func:`load_catalog_file`, :func:`catalog_from_text`, :func:`dump_catalog` (file format);
* :func:`fake_catalog`, :func:`fake_instance_types` (Karpenter's fake provider, for tests).

Boundary: no scheduling here; the scheduler consumes ``InstanceType.requirements``,
``allocatable()`` and ``offerings``.
"""

from __future__ import annotations

from nodewright.catalog.fake import default_instance_types, fake_catalog, fake_instance_types
from nodewright.catalog.fileformat import catalog_from_text, dump_catalog, load_catalog_file
from nodewright.catalog.loader import apply_kubelet, load_catalog
from nodewright.catalog.model import Catalog, Ec2Facts, InstanceType, Offering, Overhead, RequirementSpec
from nodewright.catalog.overhead import DeviceSize, KubeletOptions, NodeClassOptions

__all__ = [
    "Catalog",
    "DeviceSize",
    "Ec2Facts",
    "InstanceType",
    "KubeletOptions",
    "NodeClassOptions",
    "Offering",
    "Overhead",
    "RequirementSpec",
    "apply_kubelet",
    "catalog_from_text",
    "default_instance_types",
    "dump_catalog",
    "fake_catalog",
    "fake_instance_types",
    "load_catalog",
    "load_catalog_file",
]
