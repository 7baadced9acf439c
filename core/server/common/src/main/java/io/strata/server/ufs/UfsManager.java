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
 * <p>Bounded: at most {@code maxClients} clients are open; when full, the least recently used client idle
 * for {@code idleMs} and with no open {@link Lease} is closed to make room, and if there is none a new one is
 * refused (UNAVAILABLE naming {@code strata.ufs.clients.max}: a busy server, which a client may retry later or, reading
 * through a worker, at another worker; RESOURCE_EXHAUSTED would read to a client as a full cache). {@link #probe} runs a status call on its
 * own small pool with a timeout that really stops it: the probing thread is interrupted and a client
 * opened for the probe is closed (so is one opened for a probe that was refused).
 *
 * <p>Users. Closing a client closes what is open on it (on HDFS, its streams: a half-written file is completed and
 * its writer then fails, ClosedChannelException or "Filesystem closed"), and idleness is judged by the last
 * {@link #get} or lease release. So a use that may outlast {@code idleMs} (a stream, from its open to its close or
 * abort: a through write, a persist, a block load or uncached read) holds a {@link Lease} from {@link #acquire}: a client
 * with an open lease is never closed to make room, whatever its last use. A short call (a status, a rename, a
 * delete, a listing) may use {@link #get}: the get marks the client used, so it cannot be closed to make room until
 * {@code idleMs} after it, far longer than such a call runs.
 *
 * <p>Retiring. {@link #discard} and {@link #close} never close a client under a lease: they take it out of the map at
 * once (no {@link #get} or {@link #acquire} returns it again; the next one opens a new client) and close it then if it
 * has no open lease, else when its last lease is closed. So {@link #close} of the manager closes the unleased clients
 * at once and each leased one at its last release, however long that takes (a stream's holder closes or aborts it as
 * its server stops); it logs how many were left leased. A lease never closed keeps its client open until the process
 * exits.
 *
 * <p>Thread-safe. Its monitor guards only the bound's bookkeeping (which client to close, how many are
 * being opened, the open leases, the retired clients still leased) and is a leaf: clients are opened and closed with no
 * lock held (a Hadoop client may resolve hosts or load classes for long; two callers may both open one, and the loser
 * closes its own).
 */
public final class UfsManager implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(UfsManager.class);

  private record Key(String scheme, String authority, Map<String, String> options) {}

  /** Schemes whose URIs must name a host or bucket. */
  private static final java.util.Set<String> NEEDS_AUTHORITY = java.util.Set.of("hdfs", "webhdfs", "viewfs", "s3",
      "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos");

  private final Map<Key, UnderFileSystem> clients = new ConcurrentHashMap<>();
  /** Last {@link #get}, acquire or lease release of each client, for idle eviction. */
  private final Map<Key, Long> lastUsedNanos = new ConcurrentHashMap<>();
  /** Open leases per client (by identity; absent when none); guarded by this object's monitor. */
  private final Map<UnderFileSystem, Integer> leases = new java.util.IdentityHashMap<>();
  /**
   * Clients out of the map (discarded, or the manager closed) that still had open leases: each is closed at its last
   * release. Guarded by this object's monitor.
   */
  private final java.util.Set<UnderFileSystem> retired =
      java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
  private final int maxClients;
  private final long idleNanos;
  private final java.util.concurrent.ThreadPoolExecutor probes;
  /** Clients being opened now (counted against the bound); guarded by this object's monitor. */
  private int opening;
  private volatile boolean closed;

  /** A manager with the default bounds (64 clients, 10 minutes idle). */
  public UfsManager() {
    this(64, java.time.Duration.ofMinutes(10));
  }

  public UfsManager(int maxClients, java.time.Duration idle) {
    this.maxClients = maxClients;
    this.idleNanos = idle.toNanos();
    this.probes = new java.util.concurrent.ThreadPoolExecutor(4, 4, 30, java.util.concurrent.TimeUnit.SECONDS,
        new java.util.concurrent.ArrayBlockingQueue<>(16), r -> {
          Thread t = new Thread(r, "ufs-probe");
          t.setDaemon(true);
          return t;
        });
    probes.allowCoreThreadTimeOut(true);
  }

  /** Clients open now. */
  public int openClients() {
    return clients.size();
  }

  /** Whether the client of {@code uri} and {@code options} is open. */
  public boolean isOpen(String uri, Map<String, String> options) {
    return clients.containsKey(key(uri, options));
  }

  /** A manager bounded by the configuration's {@code strata.ufs.*} keys. */
  public static UfsManager fromConf(io.strata.common.conf.StrataConf conf) {
    return new UfsManager(conf.get(io.strata.server.ServerKeys.UFS_CLIENTS_MAX),
        conf.get(io.strata.server.ServerKeys.UFS_CLIENT_IDLE_TIMEOUT));
  }

  /**
   * Takes room for one more client: when full, takes the least recently used client idle for long enough and with
   * no open lease out of the map (the caller closes it, with no lock held), else refuses. Counts the caller as opening.
   */
  private synchronized UnderFileSystem takeRoom(String uri) throws IOException {
    if (clients.size() + opening < maxClients) {
      opening++;
      return null;
    }
    long now = System.nanoTime();
    Key victim = null;
    long oldest = Long.MAX_VALUE;
    for (Map.Entry<Key, Long> e : lastUsedNanos.entrySet()) {
      if (now - e.getValue() >= idleNanos && e.getValue() < oldest && !leases.containsKey(clients.get(e.getKey()))) {
        oldest = e.getValue();
        victim = e.getKey();
      }
    }
    if (victim == null) {
      throw new io.strata.common.exception.UnavailableException("Cannot open an under file system client "
          + "for " + uri + ": " + clients.size() + " are open and in use, the most " + io.strata.server.ServerKeys.UFS_CLIENTS_MAX.name()
          + " allows");
    }
    lastUsedNanos.remove(victim);
    opening++;
    LOG.info("Closing the idle under file system client of {}://{} to make room", victim.scheme(), victim.authority());
    return clients.remove(victim);
  }

  private synchronized void opened() {
    opening--;
  }

  private static void closeQuietly(UnderFileSystem ufs) {
    if (ufs != null) {
      try {
        ufs.close();
      } catch (IOException | RuntimeException e) {
        LOG.debug("Closing an under file system client: {}", e.toString());
      }
    }
  }

  private static Key key(String uri, Map<String, String> options) {
    URI u = new org.apache.hadoop.fs.Path(uri).toUri();
    return new Key(u.getScheme(), u.getAuthority() == null ? "" : u.getAuthority(), new TreeMap<>(options));
  }

  /**
   * Forgets the client of {@code uri} and {@code options}, if one is open: the next use opens another. It is closed now
   * if no lease holds it, else at its last lease's release (see the class comment).
   */
  public void discard(String uri, Map<String, String> options) {
    closeQuietly(retire(key(uri, options)));
  }

  /** Takes the client of {@code k} out of the map; returns it when it may be closed now (no lease holds it). */
  private synchronized UnderFileSystem retire(Key k) {
    lastUsedNanos.remove(k);
    UnderFileSystem ufs = clients.remove(k);
    if (ufs != null && leases.containsKey(ufs)) {
      retired.add(ufs);
      return null;
    }
    return ufs;
  }

  /** Retired clients still held by a lease (waiting for their last release to be closed). */
  public synchronized int retiredLeasedClients() {
    return retired.size();
  }

  /**
   * The status of {@code uri} (null when it does not exist), asked on the probe pool within
   * {@code timeout}. On a timeout, an error or an interrupt, the probing thread is interrupted. A client that
   * was open before the probe is probed through and stays (others use it); otherwise the probe opens a client of
   * its own, outside the map (not counted by {@code strata.ufs.clients.max} until then; the probe pool bounds them):
   * kept as the file system's client when the probe answers (a mount that follows uses it) and room is left, else
   * closed when the probe ends, so nothing keeps waiting on an unresponsive file system, however late its opening
   * ends.
   */
  public UfsStatus probe(String uri, Map<String, String> options, java.time.Duration timeout) throws IOException {
    // A client others use is probed through and stays. With none (looked for on the probe thread: one open when the
    // probe was asked for may be gone when it runs), the probe opens one of its own, outside the map until it
    // answered: put in the map by a probe thread that outlived its timeout, it stayed open for good (the caller's
    // discard had found nothing yet).
    Key key = key(uri, options);
    ProbeClient own = new ProbeClient();
    java.util.concurrent.Future<UfsStatus> f;
    try {
      f = probes.submit(() -> {
        UnderFileSystem shared = clients.get(key);
        if (shared != null && use(key, shared, false)) {
          return shared.getStatus(uri);
        }
        UnderFileSystem c = newClient(uri, options);
        if (!own.set(c)) {
          closeQuietly(c);
          throw new java.io.InterruptedIOException("the check of " + uri + " was given up");
        }
        return c.getStatus(uri);
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new io.strata.common.exception.ResourceExhaustedException("Cannot check " + uri + ": 20 under file "
          + "system checks are already running or waiting");
    }
    boolean ok = false;
    try {
      UfsStatus s = f.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      ok = true;
      closeQuietly(adopt(key, own.giveUp()));
      return s;
    } catch (java.util.concurrent.TimeoutException e) {
      throw new java.io.InterruptedIOException("the under file system did not answer within " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while checking " + uri);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause().toString(), e.getCause());
    } finally {
      if (!ok) {
        f.cancel(true);
        closeQuietly(own.giveUp());
      }
    }
  }

  /**
   * Keeps the client of a probe that answered as the client of its file system (a mount that follows uses it), unless
   * another was opened meanwhile, the manager is closed or full: then returns it for the caller to close.
   */
  private synchronized UnderFileSystem adopt(Key key, UnderFileSystem probed) {
    if (probed == null || closed || clients.containsKey(key) || clients.size() + opening >= maxClients) {
      return probed;
    }
    clients.put(key, probed);
    use(key, probed, false);
    return null;
  }

  /**
   * The client a probe opened for itself: the probe's caller gives it up when the probe ends (closing it, if the
   * probe thread made it by then), and a probe thread that makes it later closes it at once.
   */
  private static final class ProbeClient {
    private UnderFileSystem client;
    private boolean givenUp;

    /** False when the probe was given up already (the caller closes nothing made later: the maker does). */
    synchronized boolean set(UnderFileSystem c) {
      if (givenUp) {
        return false;
      }
      client = c;
      return true;
    }

    /** The client made so far (null: none yet, and none will be kept); the caller closes it. */
    synchronized UnderFileSystem giveUp() {
      givenUp = true;
      UnderFileSystem c = client;
      client = null;
      return c;
    }
  }

  /**
   * The client for the file system holding {@code uri} (a normalised URI), configured with {@code options}, for short
   * calls only: one that may outlast {@code strata.ufs.client.idle.timeout} (a stream) needs {@link #acquire}.
   */
  public UnderFileSystem get(String uri, Map<String, String> options) throws IOException {
    return client(uri, options, false);
  }

  /**
   * A lease on the client {@link #get} would return, which is not closed to make room until the lease is closed.
   * Close it when the use ends (the stream is closed or abandoned).
   */
  public Lease acquire(String uri, Map<String, String> options) throws IOException {
    Key key = key(uri, options);
    return new Lease(key, client(uri, options, true));
  }

  /** One open use of a client (see the class comment); {@link #close} ends it, once. */
  public final class Lease implements AutoCloseable {
    private final Key key;
    private final UnderFileSystem ufs;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

    private Lease(Key key, UnderFileSystem ufs) {
      this.key = key;
      this.ufs = ufs;
    }

    public UnderFileSystem ufs() {
      return ufs;
    }

    @Override
    public void close() {
      if (released.compareAndSet(false, true)) {
        closeQuietly(release(key, ufs)); // outside the monitor
      }
    }
  }

  /** Ends one lease of {@code ufs}; returns it when it was retired and this was its last lease (the caller closes it). */
  private synchronized UnderFileSystem release(Key key, UnderFileSystem ufs) {
    Integer n = leases.get(ufs);
    if (n == null || n == 1) {
      leases.remove(ufs);
    } else {
      leases.put(ufs, n - 1);
      return null;
    }
    if (clients.get(key) == ufs) {
      lastUsedNanos.put(key, System.nanoTime()); // idle from the end of its use, not its start
      return null;
    }
    return retired.remove(ufs) ? ufs : null;
  }

  /**
   * Marks {@code ufs}, found under {@code key}, used now (and leased, with {@code lease}). False when it was closed to
   * make room since it was found: the caller opens another.
   */
  private synchronized boolean use(Key key, UnderFileSystem ufs, boolean lease) {
    if (clients.get(key) != ufs) {
      return false;
    }
    lastUsedNanos.put(key, System.nanoTime());
    if (lease) {
      leases.merge(ufs, 1, Integer::sum);
    }
    return true;
  }

  private UnderFileSystem client(String uri, Map<String, String> options, boolean lease) throws IOException {
    if (closed) {
      throw new IOException("The under file system clients are closed");
    }
    Key key = key(uri, options);
    UnderFileSystem ufs = clients.get(key);
    if (ufs != null && use(key, ufs, lease)) {
      return ufs;
    }
    closeQuietly(takeRoom(uri));
    UnderFileSystem opened;
    try {
      opened = newClient(uri, options);
    } finally {
      opened();
    }
    UnderFileSystem raced;
    boolean refused;
    synchronized (this) { // put and marked used at once, so no takeRoom closes it in between
      refused = closed; // close() sets it under this monitor: it either saw this client in the map or refuses it here
      raced = refused ? null : clients.putIfAbsent(key, opened);
      if (!refused) {
        use(key, raced != null ? raced : opened, lease);
      }
    }
    if (refused || raced != null) {
      closeQuietly(opened);
      if (refused) {
        throw new IOException("The under file system clients are closed");
      }
      return raced;
    }
    return opened;
  }

  /** A new client of the file system holding {@code uri}, kept nowhere (the caller keeps or closes it). */
  private static UnderFileSystem newClient(String uri, Map<String, String> options) throws IOException {
    URI u = new org.apache.hadoop.fs.Path(uri).toUri();
    try {
      return new HadoopUnderFileSystem(new URI(u.getScheme(), u.getAuthority(), "/", null, null), options);
    } catch (URISyntaxException e) {
      throw new IOException("Bad under file system URI " + uri + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      // Hadoop reports an unknown scheme or a bad option as an unchecked exception.
      throw new IOException("Cannot open the under file system " + uri + ": " + e.getMessage(), e);
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
    if (NEEDS_AUTHORITY.contains(u.getScheme().toLowerCase(java.util.Locale.ROOT)) && (u.getAuthority() == null || u.getAuthority().isEmpty())) {
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
    // Schemes and host names compare without case (RFC 3986), as Hadoop compares them: one spelling each, so "FILE:"
    // or "hdfs://NN" is never a second name for a mount's UFS.
    String scheme = u.getScheme().toLowerCase(java.util.Locale.ROOT);
    String authority = u.getAuthority();
    if (authority != null && u.getHost() != null) {
      authority = authority.replace(u.getHost(), u.getHost().toLowerCase(java.util.Locale.ROOT));
    }
    try {
      return new URI(scheme, authority, path, null, null).toString();
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

  /**
   * Refuses new uses, closes every client no lease holds and leaves each leased one to be closed at its last release
   * (see the class comment).
   */
  @Override
  public void close() {
    java.util.List<UnderFileSystem> idle = new java.util.ArrayList<>();
    int leased;
    synchronized (this) {
      closed = true;
      for (Key k : new java.util.ArrayList<>(clients.keySet())) {
        UnderFileSystem ufs = retire(k);
        if (ufs != null) {
          idle.add(ufs);
        }
      }
      leased = retired.size();
    }
    probes.shutdownNow();
    idle.forEach(UfsManager::closeQuietly);
    if (leased > 0) {
      LOG.info("{} under file system client(s) still leased by open streams: each closes when its last stream ends",
          leased);
    }
  }
}
