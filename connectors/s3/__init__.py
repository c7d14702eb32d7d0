"""The S3 family: S3Sink (connectors/s3/sink.py) and S3Source (connectors/s3/source.py).

Shared pieces, one concept per module:

- ``config``: the keys (those both use: bucket, region, ``store.url``,
  credentials, ``topics.dir``, ``format.class``; then the sink's and the source's);
- ``client``: the boto3 client, and S3 failures told as sentences naming the key;
- ``naming``: ``<topics.dir>/<topic>/<encoded partition>/<topic>+<p>+<start>.<ext>``;
- ``formats`` (JSON lines, bytearray) and ``parquet`` (pyarrow, imported only
  when chosen); ``partitioners`` and ``joda`` (``path.format``);
- sink side: ``writer`` (one Kafka partition's open objects and rotation),
  ``uploader`` (batches written in the background, in order), ``upload``
  (PUT or multipart), ``upload_process`` (large objects written from a child
  process, off the worker's GIL), ``recovery`` (where the committed objects end);
- source side: ``restore`` (the sink's objects back into their partitions) and
  ``generic`` (any objects under a prefix).
"""
