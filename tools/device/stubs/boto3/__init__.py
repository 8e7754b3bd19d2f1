"""Stand-in for boto3 on the device machine (tools/device/README.md): `flair.file_utils` imports boto3 and botocore at
import time, for downloads from S3 that pre-training never makes; the real botocore wheel alone is 13 MB of the 64 MiB
that may travel. It is on sys.path after the real packages, so wherever boto3 is installed, the real one is used."""


def resource(*args, **kwargs):
    raise RuntimeError("boto3 is a stand-in on the device machine (tools/device/stubs): nothing can be downloaded there")


client = resource
