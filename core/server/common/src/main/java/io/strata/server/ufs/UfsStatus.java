package io.strata.server.ufs;

/** What an under file system says of one path. Immutable. */
public record UfsStatus(String name, boolean directory, long length, long modificationTimeMs, int mode,
    String owner, String group) {}
