package io.strata.server.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Storage dirs summed per tier, top tier first, as the web pages and {@code fsadmin report} show them:
 * capacity and usage count good dirs only (a bad dir holds nothing usable). Built by one thread.
 */
public final class TierTotals {
  /** One tier's totals; {@code ordinal} 0 is the top tier. */
  public record Tier(int ordinal, String alias, long capacityBytes, long usedBytes, int dirs, int badDirs) {
    public long availableBytes() {
      return Math.max(0, capacityBytes - usedBytes);
    }
  }

  private final Map<Integer, Tier> tiers = new TreeMap<>();

  /** Counts one dir. */
  public TierTotals add(int ordinal, String alias, boolean good, long capacityBytes, long usedBytes) {
    Tier t = tiers.getOrDefault(ordinal, new Tier(ordinal, alias, 0, 0, 0, 0));
    tiers.put(ordinal, new Tier(ordinal, t.alias(), t.capacityBytes() + (good ? capacityBytes : 0),
        t.usedBytes() + (good ? usedBytes : 0), t.dirs() + 1, t.badDirs() + (good ? 0 : 1)));
    return this;
  }

  /** The tiers, top first. */
  public List<Tier> tiers() {
    return new ArrayList<>(tiers.values());
  }
}
