package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The rules that keep mounts away from Strata itself, checked for every nested mount and for the root
 * mount at start:
 * <ul>
 *   <li>a local ({@code file:}) mount may not overlap (lie inside, or contain) the master's journal, data
 *       or log dir, nor any storage dir a registered worker reported; it may not contain the install dir
 *       ({@code strata.home}) nor lie inside its {@code bin}, {@code lib}, {@code libexec} or {@code conf}
 *       (a mount there would let clients read or replace Strata's state, or the code it loads); paths
 *       are compared after resolving symbolic links;</li>
 *   <li>a URI may not carry credentials ({@code scheme://user:secret@host}): they belong in mount options,
 *       which are masked for clients and never logged, while URIs are logged and listed;</li>
 *   <li>options that choose classes or credential providers to load ({@code fs.*.impl}, {@code *.class},
 *       {@code *.factory}, {@code *.provider(s)}, {@code hadoop.security.*}, {@code io.serializations},
 *       ...) are refused in nested mounts unless {@code strata.master.mount.options.unsafe.allowed}
 *       (the root mount's options are the operator's); so are {@code fs.viewfs.*} options and {@code viewfs:} or
 *       {@code har:} URIs, whose file systems map paths onto other file systems the local rules cannot see.</li>
 * </ul>
 * Immutable; thread-safe.
 */
public final class MountGuard {
  /** No rules (unit tests of the namespace). */
  public static final MountGuard NONE = new MountGuard(List.of(), null, true);

  private static final Set<String> UNSAFE_SEGMENTS = Set.of("impl", "class", "classes", "factory", "provider",
      "providers", "codecs", "serializations", "signers", "binding", "classname", "loader");
  private static final List<String> HOME_CODE_DIRS = List.of("bin", "lib", "libexec", "conf");

  private final List<Path> stateDirs;
  private final Path home;
  private final boolean unsafeOptionsAllowed;

  /**
   * @param stateDirs the master's journal, data and log dirs
   * @param home the install dir, or null for none
   */
  public MountGuard(List<Path> stateDirs, Path home, boolean unsafeOptionsAllowed) {
    List<Path> dirs = new ArrayList<>();
    for (Path d : stateDirs) {
      dirs.add(real(d));
    }
    this.stateDirs = List.copyOf(dirs);
    this.home = home == null ? null : real(home);
    this.unsafeOptionsAllowed = unsafeOptionsAllowed;
  }

  /** The path with symbolic links resolved as far as it exists. */
  static Path real(Path p) {
    Path abs = p.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return abs;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(abs)).normalize();
    } catch (IOException e) {
      return abs;
    }
  }

  /**
   * Schemes whose file systems map their paths onto other file systems' (a view's mount table, an archive's
   * underlying file), so the local-dir rules could not see what they reach: nested mounts of them are refused
   * unless unsafe options are allowed.
   */
  private static final Set<String> REDIRECTING_SCHEMES = Set.of("viewfs", "har");

  /**
   * True when {@code key} chooses a class, a provider or code to load, or maps paths onto other file systems
   * ({@code fs.viewfs.*}: a view's mount table could link a mount to Strata's journal or a worker's storage dir).
   */
  public static boolean unsafeOption(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    if (k.startsWith("hadoop.security.") || k.contains("credential.provider") || k.contains("credentials.provider")
        || k.startsWith("fs.viewfs.")) {
      return true;
    }
    for (String seg : k.split("[.\\-_]")) {
      if (UNSAFE_SEGMENTS.contains(seg)) {
        return true;
      }
    }
    return false;
  }

  /** A nested mount of {@code uri} (normalised; {@code given} as the user wrote it) at {@code path}. */
  void checkMount(String path, String given, String uri, Map<String, String> options, List<String> workerDirs)
      throws StrataException {
    String what = "Cannot mount " + redact(given) + " at " + path;
    checkUriCredentials(what, uri);
    String scheme = scheme(uri);
    if (!unsafeOptionsAllowed && scheme != null && REDIRECTING_SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
      throw new PermissionDeniedException(what + ": a " + scheme + ": file system maps its paths onto other file "
          + "systems, which nested mounts may not do unless strata.master.mount.options.unsafe.allowed=true (mount "
          + "the file system it maps to instead)");
    }
    for (String key : options.keySet()) {
      // Hadoop trims option names: " fs.file.impl" would set fs.file.impl past the check below.
      if (key.isEmpty() || key.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
        throw new InvalidArgumentException(what + ": mount option name '" + key.replaceAll("\\p{Cntrl}", "?")
            + "' is empty or holds white space or a control character");
      }
    }
    if (!unsafeOptionsAllowed) {
      for (String key : options.keySet()) {
        if (unsafeOption(key)) {
          throw new PermissionDeniedException(what + ": mount option " + key + " chooses classes or credential "
              + "providers to load, which nested mounts may not do unless strata.master.mount.options.unsafe.allowed"
              + "=true");
        }
      }
    }
    checkLocal(what, uri, workerDirs);
  }

  /** The root mount at start; throws naming the rule it breaks. */
  public void checkRoot(String uri) throws StrataException {
    String what = "The root under file system " + redact(uri) + " (strata.master.mount.table.root.ufs) is refused";
    checkUriCredentials(what, uri);
    checkLocal(what, uri, List.of());
  }

  private static void checkUriCredentials(String what, String uri) throws InvalidArgumentException {
    String info = userInfo(uri);
    if (info != null && info.contains(":")) {
      throw new InvalidArgumentException(what + ": the URI carries credentials (user:secret@); give them as mount "
          + "options, which are kept from clients and logs");
    }
  }

  private static String userInfo(String uri) {
    try {
      return URI.create(uri).getRawUserInfo();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String scheme(String uri) {
    try {
      return URI.create(uri).getScheme();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** {@code uri} with any user info replaced by {@code ***}, for messages. */
  static String redact(String uri) {
    String info = userInfo(uri);
    return info == null ? uri : uri.replace(info + "@", "***@");
  }

  private void checkLocal(String what, String uri, List<String> workerDirs) throws InvalidArgumentException {
    if (!uri.regionMatches(true, 0, "file:", 0, 5)) { // Hadoop takes FILE: as file:
      return;
    }
    if (uri.indexOf('%') >= 0) {
      // This check would read %XX decoded, Hadoop's local file system as it is: two different paths.
      throw new InvalidArgumentException(what + ": a local path with characters a URI escapes (a space, '%', ...) is "
          + "not supported");
    }
    Path p;
    try {
      p = real(Path.of(URI.create(uri)));
    } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
      // Fails closed: a local URI this check cannot read is not mounted unchecked.
      throw new InvalidArgumentException(what + ": not a local path this master can check (" + e.getMessage() + ")");
    }
    for (Path d : stateDirs) {
      refuseOverlap(what, p, d, "Strata's own state dir");
    }
    for (String w : workerDirs) {
      refuseOverlap(what, p, real(Path.of(w)), "a worker's storage dir");
    }
    if (home != null) {
      if (home.startsWith(p)) {
        throw new InvalidArgumentException(what + ": it contains Strata's install dir " + home + " (strata.home)");
      }
      for (String code : HOME_CODE_DIRS) {
        Path c = home.resolve(code);
        if (p.startsWith(c)) {
          throw new InvalidArgumentException(what + ": it lies inside Strata's install dir " + c);
        }
      }
    }
  }

  private static void refuseOverlap(String what, Path mount, Path dir, String kind) throws InvalidArgumentException {
    if (mount.startsWith(dir) || dir.startsWith(mount)) {
      throw new InvalidArgumentException(what + ": it overlaps " + kind + " " + dir + " (a mount may neither "
          + "contain nor lie inside it)");
    }
  }
}
