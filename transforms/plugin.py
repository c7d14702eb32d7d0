"""The bundled transforms and predicates, registered through the same hooks as
third-party plugins (``connect_worker.plugins`` loads this module).

Each class carries its names in ``aliases``: Kafka's class name
(``org.apache.kafka.connect.transforms.InsertField$Value``) and the short form
(``InsertField$Value``); its dotted Python path works too.
"""

from __future__ import annotations

from connectors.api import hookimpl
from transforms.api import Predicate, Transformation
from transforms.cast import CastKey, CastValue
from transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from transforms.extract_new_record_state import ExtractNewRecordState
from transforms.filter import Filter
from transforms.flatten import FlattenKey, FlattenValue
from transforms.header_from import HeaderFromKey, HeaderFromValue
from transforms.headers import DropHeaders, InsertHeader
from transforms.hoist_field import HoistFieldKey, HoistFieldValue
from transforms.insert_field import InsertFieldKey, InsertFieldValue
from transforms.mask_field import MaskFieldKey, MaskFieldValue
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from transforms.regex_router import RegexRouter
from transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue
from transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue
from transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue
from transforms.timestamp_router import TimestampRouter
from transforms.value_to_key import ValueToKey

TRANSFORMS: tuple[type[Transformation], ...] = (
    CastKey,
    CastValue,
    DropHeaders,
    ExtractFieldKey,
    ExtractFieldValue,
    Filter,
    FlattenKey,
    FlattenValue,
    HeaderFromKey,
    HeaderFromValue,
    HoistFieldKey,
    HoistFieldValue,
    InsertFieldKey,
    InsertFieldValue,
    InsertHeader,
    MaskFieldKey,
    MaskFieldValue,
    RegexRouter,
    ReplaceFieldKey,
    ReplaceFieldValue,
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    TimestampConverterKey,
    TimestampConverterValue,
    TimestampRouter,
    ValueToKey,
    ExtractNewRecordState,
)
PREDICATES: tuple[type[Predicate], ...] = (TopicNameMatches, HasHeaderKey, RecordIsTombstone)


@hookimpl
def sluice_transforms() -> list[type]:
    """Kafka's sixteen SMTs (with $Key/$Value variants) and Debezium's ExtractNewRecordState."""
    return list(TRANSFORMS)


@hookimpl
def sluice_predicates() -> list[type]:
    """Kafka's three predicates."""
    return list(PREDICATES)
