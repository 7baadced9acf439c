package io.strata.cli;

import io.strata.client.ClusterInfo;
import io.strata.client.FileBlockInfo;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.FreeResult;
import io.strata.client.MountInfo;
import io.strata.client.URIStatus;
import io.strata.client.WorkerInfo;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.RenameOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.NotFoundException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * An in-memory FileSystem for the metadata commands: statuses by path, a mount table, and a log of the
 * calls made ({@code "mount /m hdfs://x readOnly=true ..."}), so tests check what the CLI asked for.
 * Data calls (createFile, openFile) are unsupported. Not thread-safe.
 */
final class FakeFileSystem implements FileSystem {
  final Map<String, URIStatus> statuses = new TreeMap<>();
  final List<MountInfo> mounts = new ArrayList<>();
  final List<String> calls = new ArrayList<>();
  final Map<String, String> checksums = new TreeMap<>();

  static URIStatus file(String path, String persistence) {
    return new URIStatus(7, path, CliPaths.name(path), false, 10, 1024, true, 0, 0, "o", "g", 0644, 0, List.of(),
        persistence, false, -1, "", "", false);
  }

  static URIStatus dir(String path) {
    return new URIStatus(3, path, CliPaths.name(path), true, 0, 0, true, 0, 0, "o", "g", 0755, 0, List.of(),
        URIStatus.PERSISTED, false, -1, "", "", false);
  }

  FakeFileSystem add(URIStatus s) {
    statuses.put(s.path(), s);
    return this;
  }

  private URIStatus status(String path) throws NotFoundException {
    URIStatus s = statuses.get(path);
    if (s == null) {
      throw new NotFoundException("Path " + path + " does not exist", null);
    }
    return s;
  }

  @Override
  public FileOutStream createFile(String path, CreateFileOptions options) {
    throw new UnsupportedOperationException();
  }

  @Override
  public FileInStream openFile(String path, OpenFileOptions options) {
    throw new UnsupportedOperationException();
  }

  @Override
  public URIStatus getStatus(String path, GetStatusOptions options) throws NotFoundException {
    calls.add("getStatus " + path + " sync=" + options.syncIntervalMs());
    return status(path);
  }

  @Override
  public List<FileBlockInfo> getBlockLocations(String path) throws NotFoundException {
    return status(path).blocks();
  }

  @Override
  public void iterateStatus(String path, ListStatusOptions options, Consumer<URIStatus> action) {
    calls.add("listStatus " + path + " recursive=" + options.recursive() + " sync=" + options.syncIntervalMs());
    String prefix = path.equals("/") ? "/" : path + "/";
    for (URIStatus s : statuses.values()) {
      String rest = s.path().startsWith(prefix) ? s.path().substring(prefix.length()) : null;
      if (rest != null && !rest.isEmpty() && (options.recursive() || !rest.contains("/"))) {
        action.accept(s);
      }
    }
  }

  @Override
  public void createDirectory(String path, CreateDirectoryOptions options) {
    calls.add("createDirectory " + path + " writeType=" + options.writeType().orElse(null));
    statuses.put(path, dir(path));
  }

  @Override
  public void delete(String path, DeleteOptions options) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void rename(String src, String dst, RenameOptions options) {
    throw new UnsupportedOperationException();
  }

  @Override
  public boolean exists(String path) {
    return statuses.containsKey(path);
  }

  @Override
  public List<WorkerInfo> getWorkers() {
    return List.of();
  }

  @Override
  public ClusterInfo getClusterInfo() {
    throw new UnsupportedOperationException();
  }

  @Override
  public void mount(String path, String ufsUri, MountOptions options) {
    calls.add("mount " + path + " " + ufsUri + " readOnly=" + options.readOnly() + " shared=" + options.shared()
        + " properties=" + options.properties());
    mounts.add(new MountInfo(path, ufsUri, options.readOnly(), options.shared(), options.properties()));
  }

  @Override
  public void unmount(String path) throws NotFoundException {
    calls.add("unmount " + path);
    if (!mounts.removeIf(m -> m.path().equals(path))) {
      throw new NotFoundException("No mount at " + path, null);
    }
  }

  @Override
  public List<MountInfo> getMountTable() {
    return List.copyOf(mounts);
  }

  @Override
  public FreeResult free(String path, boolean recursive, boolean force) throws NotFoundException {
    status(path);
    calls.add("free " + path + " recursive=" + recursive + " force=" + force);
    return new FreeResult(2, 5);
  }

  @Override
  public URIStatus setAttribute(String path, SetAttributeOptions options) throws NotFoundException {
    calls.add("setAttribute " + path + " pinned=" + options.pinned().orElse(null) + " ttlMs=" + options.ttlMs()
        + " ttlAction=" + options.ttlAction().orElse(null));
    return status(path);
  }

  @Override
  public URIStatus persist(String path, Duration timeout) throws NotFoundException {
    calls.add("persist " + path + " timeout=" + timeout);
    return status(path);
  }

  @Override
  public long load(String path) throws NotFoundException {
    calls.add("load " + path);
    return status(path).length();
  }

  @Override
  public String checksum(String path) throws NotFoundException {
    status(path);
    return checksums.getOrDefault(path, "d41d8cd98f00b204e9800998ecf8427e");
  }

  @Override
  public StrataConf conf() {
    return StrataConf.defaults();
  }

  @Override
  public void close() {}
}
