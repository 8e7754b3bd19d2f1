"""Stand-in for botocore.config on the device machine (see ../../boto3/__init__.py)."""


class Config:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs
