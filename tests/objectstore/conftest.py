"""A real S3-compatible server for the object-store tests: moto in server mode on 127.0.0.1.

The server checks credentials: the first three requests (unsigned) make an IAM user allowed
everything and its access key, and every request after them must be signed with a key moto
knows. A wrong key id or secret is therefore refused as AWS would refuse it
(``InvalidAccessKeyId``, ``SignatureDoesNotMatch``). One server per test process (session
scope); tests use buckets of their own.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

REGION = "us-east-1"
#: Unsigned requests moto lets through before it checks credentials: the IAM set-up below.
SETUP_REQUESTS = 3
_ALLOW_ALL = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Action": "*", "Resource": "*"}]})


@dataclass
class ObjectStore:
    """The running store: its endpoint, a valid key pair and a boto3 client signed with it."""

    endpoint: str
    access_key: str
    secret_key: str
    client: Any

    def uri(self, bucket: str, prefix: str = "", *, secret: str | None = None,
            endpoint: bool = True, credentials: bool = True) -> str:
        """A source URI for ``bucket``/``prefix`` carrying the endpoint and credentials."""
        auth = (f"{quote(self.access_key, safe='')}:{quote(secret or self.secret_key, safe='')}@"
                if credentials else "")
        query = f"?{urlencode({'endpoint': self.endpoint})}" if endpoint else ""
        return f"s3://{auth}{bucket}/{prefix}".rstrip("/") + query

    def bucket(self, prefix: str = "lake") -> str:
        """A new, empty bucket of a name no other test uses."""
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        self.client.create_bucket(Bucket=name)
        return name

    def put(self, bucket: str, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=bucket, Key=key, Body=body)


@pytest.fixture(scope="session")
def object_store() -> Iterator[ObjectStore]:
    """moto's S3 server on a free port of 127.0.0.1, checking credentials."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        answer = requests.post(f"{endpoint}/moto-api/reset-auth", data=str(SETUP_REQUESTS),
                               timeout=10)
        assert answer.status_code == 200, answer.text
        iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION,
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="catalog")
        iam.put_user_policy(UserName="catalog", PolicyName="all", PolicyDocument=_ALLOW_ALL)
        key = iam.create_access_key(UserName="catalog")["AccessKey"]
        client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                              aws_access_key_id=key["AccessKeyId"],
                              aws_secret_access_key=key["SecretAccessKey"])
        yield ObjectStore(endpoint, key["AccessKeyId"], key["SecretAccessKey"], client)
    finally:
        server.stop()
