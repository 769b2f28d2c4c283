"""One S3 download attempt (boto3, optional): resumed by byte range only while the object's ETag
stays the same, checked against the object's size and, where the ETag is one, its MD5."""

from __future__ import annotations

import re
from pathlib import Path

from corpusbuilder.download.transfer import (
    RETRY_STATUSES,
    DownloadError,
    TransientError,
    file_size,
    hex_digest,
    receive,
    validator_path,
)

# botocore's read(n) drops what it got of a chunk the connection lost, so S3 bodies are read in
# smaller chunks: a dropped connection costs at most this much to download again.
S3_CHUNK_SIZE = 1 << 16
S3_INSTALL_HINT = "s3:// inputs need boto3: pip install 'corpusbuilder[s3]'"
S3_RETRY_CODES = {
    "SlowDown",
    "RequestTimeout",
    "Throttling",
    "ThrottlingException",
    "InternalError",
}


def s3_available() -> bool:
    """Whether boto3, which s3:// inputs need, is installed (the config check asks before any
    job)."""
    try:
        import boto3  # noqa: F401
    except ImportError:
        return False
    return True


def s3_client(options: dict, timeout: float):
    """A boto3 S3 client for download.s3's ``options``. botocore's own retries are off: fetch's
    back-off is the one that counts, and a connection lost mid-body is resumed, not re-read."""
    try:
        import boto3
        import botocore
        from botocore.config import Config
    except ImportError as err:
        raise DownloadError(S3_INSTALL_HINT) from err
    config = Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"total_max_attempts": 1},
        signature_version=botocore.UNSIGNED if options.get("anonymous") else None,
    )
    # A session of its own: boto3's default one keeps the credentials it found first.
    return boto3.session.Session().client(
        "s3", endpoint_url=options.get("endpoint_url"), config=config
    )


def s3_attempt(client, url: str, part: Path, *, log) -> None:
    """One attempt at an S3 object: read its size and ETag, then append the bytes part lacks.

    The ETag the download began with is kept beside part, and the ranged GET carries If-Match: an
    object replaced since restarts from zero, so no download mixes two versions. When complete,
    the size must be the object's and so must the MD5, where the ETag is one (_plain_md5)."""
    from botocore import exceptions as boto

    bucket, _, key = url.removeprefix("s3://").partition("/")
    validator_file = validator_path(part)
    offset = file_size(part)
    try:
        head = client.head_object(Bucket=bucket, Key=key)
        etag, total = head["ETag"], head["ContentLength"]
        began = validator_file.read_text() if offset and validator_file.is_file() else etag
        if began != etag or offset > total:
            why = (
                "the object changed since the download began"
                if began != etag
                else "the partial file is too long"
            )
            log(f"{url}: {why}; restarting from zero")
            part.unlink()
            offset = 0
        validator_file.write_text(etag)
        # offset == total > 0: part holds every byte already. From byte 0 no Range is sent, which
        # S3 would refuse for an empty object.
        if offset == 0 or offset < total:
            ranged = {"Range": f"bytes={offset}-"} if offset else {}
            body = client.get_object(Bucket=bucket, Key=key, IfMatch=etag, **ranged)["Body"]
            errors = (OSError, boto.HTTPClientError, boto.IncompleteReadError)
            receive(
                body.read,
                part,
                start=offset,
                total=total,
                log=log,
                chunk_size=S3_CHUNK_SIZE,
                errors=errors,
            )
    except boto.ClientError as err:
        raise _s3_failure(url, err) from err
    except (boto.HTTPClientError, boto.ConnectionError) as err:
        raise TransientError(f"no valid response: {err}") from err
    except boto.NoCredentialsError as err:
        raise DownloadError(
            f"{url}: no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "~/.aws/credentials); a bucket open to everyone needs download.s3.anonymous"
        ) from err
    except boto.BotoCoreError as err:  # a malformed endpoint, a bad profile: no retry mends these
        raise DownloadError(f"{url}: {err}") from err

    size = file_size(part)
    if size != total:
        part.unlink()
        raise TransientError(f"received {size} bytes, the object has {total}; restarting")
    md5 = _plain_md5(head)
    if md5 is not None and hex_digest(part, "md5") != md5:
        part.unlink()
        raise TransientError(f"the bytes received do not have the object's MD5 {md5}; restarting")


def _s3_failure(url: str, err) -> Exception:
    """The error an S3 error response stands for: a retry for a server's trouble or an object
    replaced in mid-download, else one DownloadError line naming the URL."""
    status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    code = err.response.get("Error", {}).get("Code") or str(status)
    if status == 412:  # If-Match failed: the next attempt's HEAD sees the new ETag and restarts
        return TransientError("the object changed since the download began")
    if status in RETRY_STATUSES or status >= 500 or code in S3_RETRY_CODES:
        return TransientError(f"S3 {status} {code}")
    explanation = {
        403: "access denied (check the AWS credentials, or set download.s3.anonymous for a "
        "public bucket)",
        404: "no such bucket or object",
    }.get(status, err.response.get("Error", {}).get("Message") or "refused")
    detail = (
        str(status) if code == str(status) else f"{status} {code}"
    )  # a HEAD's error has no code
    return DownloadError(f"{url}: {explanation} (S3 {detail})")


def _plain_md5(head: dict) -> str | None:
    """The MD5 of an S3 object's bytes as its ETag states it; None where the ETag is no MD5: an
    object uploaded in parts ("<hex>-<parts>") or encrypted with a KMS or customer key."""
    etag = head["ETag"].strip('"')
    encryption = head.get("ServerSideEncryption")
    if encryption not in (None, "AES256") or "SSECustomerAlgorithm" in head:
        return None
    return etag if re.fullmatch(r"[0-9a-f]{32}", etag) else None
