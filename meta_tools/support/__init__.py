"""Small helpers every level uses: text and numbers as people write them, lenient JSON,
"did you mean", lifecycles, work off the event loop, secrets redacted, the Redis client.

A leaf package: it imports nothing of meta-tools outside itself.
"""
