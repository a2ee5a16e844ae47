#!/usr/bin/python3 -W ignore
"""Offline check of EC2 user data with Debian's cloud-init (apt-get install -y cloud-init).

Run with the system interpreter, which is the one that sees cloud-init's modules:
    /usr/bin/python3 -W ignore tools/validate_userdata.py FILE [FILE ...]

Splits MIME multipart, #cloud-config-archive and plain user data exactly as cloud-init
does on a booting node, then validates every text/cloud-config part against cloud-init's
own JSON schema (strict). Parts that cloud-init would not recognise are reported.
Exit status: 0 all files valid, 1 something invalid, 2 cloud-init missing.
"""

import sys
import tempfile

try:
    import yaml
    from cloudinit import helpers, user_data
    from cloudinit.config.schema import SchemaValidationError, get_schema, validate_cloudconfig_schema
except ImportError:  # pragma: no cover
    print("cloud-init is not installed for this interpreter: apt-get install -y cloud-init", file=sys.stderr)
    sys.exit(2)

# Content types that a node understands without cloud-init complaining.
KNOWN = {
    "text/x-shellscript",
    "text/cloud-config",
    "text/cloud-boothook",
    "text/part-handler",
    "text/x-include-url",
    "text/x-include-once-url",
    "text/jinja2",
    "text/x-shellscript-per-boot",
    "text/x-shellscript-per-instance",
    "text/x-shellscript-per-once",
    "application/node.eks.aws",  # AL2023 nodeadm NodeConfig parts
}


def check(path: str) -> int:
    with open(path, "rb") as fh:
        blob = fh.read()
    with tempfile.TemporaryDirectory() as tmp:
        paths = helpers.Paths({"cloud_dir": tmp + "/cloud", "run_dir": tmp + "/run"})
        message = user_data.UserDataProcessor(paths).process(blob)
    schema, rc = get_schema(), 0
    for index, part in enumerate(message.walk()):
        if part.is_multipart():
            continue
        ctype = part.get_content_type()
        payload = part.get_payload(decode=True) or b""
        print(f"{path}: part {index}: {ctype} ({len(payload)} bytes)")
        if ctype == "text/cloud-config":
            try:
                validate_cloudconfig_schema(yaml.safe_load(payload), schema, strict=True)
            except SchemaValidationError as error:
                print(f"  INVALID cloud-config: {error}")
                rc = 1
        elif ctype not in KNOWN:
            print(f"  NOT RECOGNISED by cloud-init: {payload[:60]!r}")
            rc = 1
    return rc


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(max(check(p) for p in sys.argv[1:]))
