"""Shared MQTT client code of the MqttSource and MqttSink connectors (paho-mqtt 2.x)."""
