"""Single-message transforms: the API (:mod:`transforms.api`) and the bundled SMTs.

One module per transform (or small family): ``cast``, ``extract_field``,
``flatten``, ``header_from``, ``headers`` (DropHeaders, InsertHeader),
``hoist_field``, ``insert_field``, ``mask_field``, ``regex_router``,
``replace_field``, ``set_schema_metadata``, ``timestamp_converter``,
``timestamp_router``, ``value_to_key``, ``filter``, ``predicates`` and
Debezium's ``extract_new_record_state``. ``plugin`` registers them. Private
helpers: ``_base`` ($Key/$Value dispatch), ``_records`` (cheap record copies),
``_schemas``, ``_config``, ``_casting``, ``_java_date_format``.
"""
