"""The cluster's metadata: brokers, topics and partitions as the controller quorum records them.

``types`` holds the values every side shares (the controller writes them, the
broker's replica manager and the Metadata API read them).
"""
