package io.strata.master.block;

import java.util.List;

/** The master's answer to a heartbeat: register again, and blocks to remove. */
public record HeartbeatResult(boolean reregister, List<Long> removeBlockIds) {
  public HeartbeatResult {
    removeBlockIds = List.copyOf(removeBlockIds);
  }
}
