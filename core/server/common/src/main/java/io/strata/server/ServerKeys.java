package io.strata.server;

import io.strata.common.conf.PropertyKey;

/** Keys every server process reads. */
public final class ServerKeys {
  private ServerKeys() {}

  public static final PropertyKey<String> LOGS_DIR = PropertyKey.stringKey("strata.logs.dir")
      .defaultValue("logs")
      .doc("Directory of server logs (relative to strata.home).")
      .build();

  public static final PropertyKey<String> DATA_DIR = PropertyKey.stringKey("strata.data.dir")
      .defaultValue("data")
      .doc("Directory of server state: pid files, ready markers, later the journal (relative to strata.home).")
      .build();
}
