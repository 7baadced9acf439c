package io.strata.client.options;

/** What happens to a file when its time to live runs out: FREE its cached blocks, or DELETE it. */
public enum TtlAction {
  FREE, DELETE
}
