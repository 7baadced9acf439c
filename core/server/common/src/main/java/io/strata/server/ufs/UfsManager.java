package io.strata.server.ufs;

import io.strata.common.exception.InvalidArgumentException;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The under file system clients of one server process: one per file system (scheme and authority) and
 * option set, opened on first use and kept until {@link #close()}. Also the one place UFS URIs are
 * normalised and joined, so the master and workers name UFS paths the same way.
 *
 * <p>Thread-safe, and holds no lock of its own: clients are opened and closed outside any monitor (a
 * caller may hold its own locks only if it accepts waiting on a Hadoop client's creation; the master and
 * workers call it with none held).
 */
public final class UfsManager implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(UfsManager.class);

  private record Key(String scheme, String authority, Map<String, String> options) {}

  /** Schemes whose URIs must name a host or bucket. */
  private static final java.util.Set<String> NEEDS_AUTHORITY = java.util.Set.of("hdfs", "webhdfs", "viewfs", "s3",
      "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos");

  private final Map<Key, UnderFileSystem> clients = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** The client for the file system holding {@code uri} (a normalised URI), configured with {@code options}. */
  public UnderFileSystem get(String uri, Map<String, String> options) throws IOException {
    if (closed) {
      throw new IOException("The under file system clients are closed");
    }
    URI u = new org.apache.hadoop.fs.Path(uri).toUri();
    Key key = new Key(u.getScheme(), u.getAuthority() == null ? "" : u.getAuthority(), new TreeMap<>(options));
    UnderFileSystem ufs = clients.get(key);
    if (ufs != null) {
      return ufs;
    }
    // Opened with no lock held (a Hadoop client may resolve hosts or load classes for long): two callers
    // may both open one, and the loser closes its own.
    UnderFileSystem opened;
    try {
      opened = new HadoopUnderFileSystem(new URI(u.getScheme(), u.getAuthority(), "/", null, null), options);
    } catch (URISyntaxException e) {
      throw new IOException("Bad under file system URI " + uri + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      // Hadoop reports an unknown scheme or a bad option as an unchecked exception.
      throw new IOException("Cannot open the under file system " + uri + ": " + e.getMessage(), e);
    }
    UnderFileSystem raced = clients.putIfAbsent(key, opened);
    if (raced != null) {
      closeQuietly(opened);
      return raced;
    }
    if (closed) { // close() ran meanwhile and may have missed this one
      clients.remove(key, opened);
      closeQuietly(opened);
      throw new IOException("The under file system clients are closed");
    }
    return opened;
  }

  private static void closeQuietly(UnderFileSystem ufs) {
    try {
      ufs.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("Closing an under file system client: {}", e.toString());
    }
  }

  /**
   * A UFS URI in its one form: a scheme, no trailing slash (except a root), no query or fragment. A plain
   * path (no scheme) is a local path, resolved against {@code home}: {@code ./underFSStorage} becomes
   * {@code file:/<home>/underFSStorage}.
   */
  public static String normalize(String uri, Path home) throws InvalidArgumentException {
    if (uri == null || uri.isBlank()) {
      throw new InvalidArgumentException("An under file system URI must not be empty");
    }
    String s = uri.trim();
    URI u;
    try {
      u = new URI(s);
    } catch (URISyntaxException e) {
      throw new InvalidArgumentException("'" + uri + "' is not a valid under file system URI: " + e.getMessage());
    }
    if (u.getScheme() == null || u.getScheme().length() == 1) { // no scheme, or a Windows drive letter
      String abs = home.resolve(s).toAbsolutePath().normalize().toString();
      try {
        u = new URI("file", null, abs, null);
      } catch (URISyntaxException e) {
        throw new InvalidArgumentException("'" + uri + "' is not a valid local path: " + e.getMessage());
      }
    }
    if (u.isOpaque()) {
      throw new InvalidArgumentException("'" + uri + "' is not a hierarchical URI (expected scheme://authority/path "
          + "or an absolute path)");
    }
    if (u.getQuery() != null || u.getFragment() != null) {
      throw new InvalidArgumentException("'" + uri + "': an under file system URI takes no query or fragment");
    }
    if (NEEDS_AUTHORITY.contains(u.getScheme()) && (u.getAuthority() == null || u.getAuthority().isEmpty())) {
      throw new InvalidArgumentException("'" + uri + "' names no host: " + u.getScheme() + " URIs need one ("
          + u.getScheme() + "://host:port/path)");
    }
    String path = u.normalize().getPath();
    if (path == null || path.isEmpty()) {
      path = "/";
    }
    if (path.contains("/../") || path.endsWith("/..") || path.equals("..")) {
      throw new InvalidArgumentException("'" + uri + "' climbs above its root");
    }
    while (path.length() > 1 && path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    try {
      return new URI(u.getScheme(), u.getAuthority(), path, null, null).toString();
    } catch (URISyntaxException e) {
      throw new InvalidArgumentException("'" + uri + "' is not a valid URI: " + e.getMessage());
    }
  }

  /**
   * {@code base} (normalised) and a relative path of '/' separated Strata names, unescaped: Hadoop's
   * {@code Path} takes names as they are and escapes them itself.
   */
  public static String join(String base, String relative) {
    String rel = relative.startsWith("/") ? relative.substring(1) : relative;
    if (rel.isEmpty()) {
      return base;
    }
    return base.endsWith("/") ? base + rel : base + "/" + rel;
  }

  /** The parent of a normalised UFS URI; the root of a file system is its own parent. */
  public static String parent(String uri) {
    int auth = uri.indexOf("://");
    int pathStart = auth >= 0 ? uri.indexOf('/', auth + 3) : uri.indexOf(':') + 1;
    if (pathStart < 0) {
      return uri + "/"; // scheme://authority with no path
    }
    int cut = uri.lastIndexOf('/');
    return cut <= pathStart ? uri.substring(0, pathStart + 1) : uri.substring(0, cut);
  }

  /** True when {@code uri} is {@code base} or lies under it (both normalised). */
  public static boolean isUnder(String uri, String base) {
    return uri.equals(base) || uri.startsWith(base.endsWith("/") ? base : base + "/");
  }

  @Override
  public void close() {
    closed = true;
    for (Map.Entry<Key, UnderFileSystem> e : clients.entrySet()) {
      if (clients.remove(e.getKey(), e.getValue())) {
        closeQuietly(e.getValue());
      }
    }
  }
}
