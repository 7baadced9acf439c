package io.strata.master.file;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.server.ufs.UfsManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which under file system backs each part of the namespace: Strata paths (mount points) mapped to UFS
 * URIs, the deepest mount point above a path winning. The root mount comes from the configuration; nested
 * mounts are journaled. Holds no inodes and does no I/O: validation that needs the tree or the UFS is
 * the file system master's.
 *
 * <p>Thread-safe: readers see an immutable snapshot; changes are serialised by this object's monitor.
 */
public final class MountTable {
  /** One mount. Immutable. */
  public record MountInfo(String path, String ufsUri, boolean readOnly, boolean shared, Map<String, String> options) {
    public MountInfo {
      options = Map.copyOf(options);
    }

    @Override
    public String toString() {
      return "MountInfo[path=" + path + ", ufsUri=" + ufsUri + ", readOnly=" + readOnly + ", shared=" + shared
          + ", options=" + io.strata.server.ufs.Redact.options(options) + "]";
    }
  }

  /** A Strata path resolved to its mount and its UFS URI. */
  public record Resolution(MountInfo mount, String ufsUri) {}

  private volatile Map<String, MountInfo> mounts = Map.of();

  /** Where {@code path} lives in the UFS; null when no mount covers it (no root mount configured). */
  public Resolution resolve(StrataPath path) {
    Map<String, MountInfo> m = mounts;
    if (m.isEmpty()) {
      return null;
    }
    for (StrataPath p = path; ; p = p.parent()) {
      MountInfo info = m.get(p.toString());
      if (info != null) {
        String rel = path.toString().substring(p.toString().length());
        return new Resolution(info, UfsManager.join(info.ufsUri(), rel));
      }
      if (p.isRoot()) {
        return null;
      }
    }
  }

  /** Refuses a change under a read-only mount, naming the operation and the mount. */
  public void checkWritable(StrataPath p, String op) throws StrataException {
    Resolution r = resolve(p);
    if (r != null && r.mount().readOnly()) {
      throw new PermissionDeniedException("Cannot " + op + " " + p + ": it is under the read-only mount "
          + r.mount().path() + " (" + r.mount().ufsUri() + ")");
    }
  }

  /** Where {@code p} lives in the UFS; refuses when no mount covers it. */
  public Resolution requireUfs(StrataPath p, String op) throws StrataException {
    Resolution r = resolve(p);
    if (r == null) {
      throw new FailedPreconditionException("Cannot " + op + " " + p + ": no under file system is mounted "
          + "there (set strata.master.mount.table.root.ufs)");
    }
    return r;
  }

  /** True when nothing is mounted (no root mount configured: UFS features are off). */
  public boolean isEmpty() {
    return mounts.isEmpty();
  }

  public boolean isMountPoint(String path) {
    return mounts.containsKey(path);
  }

  public MountInfo get(String path) {
    return mounts.get(path);
  }

  /** Mount points at or below {@code path}. */
  public List<MountInfo> mountsAtOrUnder(StrataPath path) {
    List<MountInfo> out = new ArrayList<>();
    for (MountInfo m : mounts.values()) {
      String under = path.toString();
      if (path.isRoot() || m.path().equals(under) || m.path().startsWith(under + "/")) {
        out.add(m);
      }
    }
    return out;
  }

  /** A mount whose UFS URI contains {@code ufsUri} or lies inside it, or null. */
  public MountInfo overlapping(String ufsUri) {
    for (MountInfo m : mounts.values()) {
      if (UfsManager.isUnder(ufsUri, m.ufsUri()) || UfsManager.isUnder(m.ufsUri(), ufsUri)) {
        return m;
      }
    }
    return null;
  }

  /** The writable mount whose UFS URI holds {@code ufsUri} most closely (the longest), or null. */
  public MountInfo writableHolding(String ufsUri) {
    MountInfo best = null;
    for (MountInfo m : mounts.values()) {
      if (!m.readOnly() && UfsManager.isUnder(ufsUri, m.ufsUri())
          && (best == null || m.ufsUri().length() > best.ufsUri().length())) {
        best = m;
      }
    }
    return best;
  }

  public List<MountInfo> list() {
    return new ArrayList<>(mounts.values());
  }

  public synchronized void add(MountInfo info) {
    Map<String, MountInfo> next = new TreeMap<>(mounts);
    next.put(info.path(), info);
    mounts = java.util.Collections.unmodifiableMap(next);
  }

  public synchronized void remove(String path) {
    Map<String, MountInfo> next = new TreeMap<>(mounts);
    next.remove(path);
    mounts = java.util.Collections.unmodifiableMap(next);
  }

  /** {@code f} with its UFS path (empty outside every mount) and whether it is a mount point. */
  FileInfo withUfs(FileInfo f) throws StrataException {
    Resolution r = resolve(StrataPath.of(f.path()));
    return f.withUfs(r == null ? "" : r.ufsUri(), isMountPoint(f.path()));
  }
}
