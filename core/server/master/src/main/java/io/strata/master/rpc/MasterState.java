package io.strata.master.rpc;

import io.strata.common.exception.UnavailableException;
import io.strata.master.file.FileSystemMaster;

/**
 * What the services serve from: the current {@link FileSystemMaster}, but only while this master leads.
 * A standby answers every call with UNAVAILABLE (naming itself as a standby), so clients and workers
 * move on to the leader. Implementations are thread-safe.
 */
@FunctionalInterface
public interface MasterState {
  FileSystemMaster leading() throws UnavailableException;

  /** Always leading (a single master). */
  static MasterState of(FileSystemMaster fs) {
    return () -> fs;
  }
}
