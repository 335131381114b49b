"""The write side of captures: from the layer's bytes on a socket to a finalized capture file."""
