"""Stand-in for botocore on the device machine (see ../boto3/__init__.py): the names `flair.file_utils` imports."""

UNSIGNED = object()
