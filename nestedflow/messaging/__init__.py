"""Stack-change notifications and stack events over oslo.messaging."""
