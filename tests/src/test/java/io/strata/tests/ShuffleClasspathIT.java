package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.tests.Scripts.Result;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What `bin/strata classpath shuffle` prints is enough for the Spark shuffle adapter outside Spark's own
 * jars: the adapter's jar and the shaded client jar, both existing; every class the adapter's bytecode
 * names outside Java, Scala, Spark and slf4j loads from exactly those jars (a fresh class loader over
 * them, the platform loader as parent); and none of those names is an unrelocated gRPC, protobuf, Guava
 * or Netty class, which would meet the versions Spark brings. No cluster, no Spark: reads the jars.
 * Single-threaded.
 */
class ShuffleClasspathIT {
  private static final String MANAGER = "io/strata/shuffle/StrataShuffleManager.class";
  /** Packages the program (the JDK, Spark and what Spark ships) provides, and the adapter's own. */
  private static final List<String> PROVIDED = List.of("java/", "javax/", "jdk/", "sun/", "scala/",
      "org/apache/spark/", "org/slf4j/", "io/strata/shuffle/");
  /** Packages the shaded client relocates: the adapter must name only their relocated copies. */
  private static final List<String> RELOCATED = List.of("io/grpc/", "com/google/", "io/netty/",
      "io/perfmark/", "com/github/benmanes/caffeine/", "org/apache/curator/", "org/apache/zookeeper/");
  private static final Pattern DESCRIPTOR_CLASS = Pattern.compile("L([A-Za-z_$][\\w$]*(?:/[\\w$]+)+);");

  @TempDir
  Path tmp;

  @Test
  void classpathShuffle_listsExistingJars_fromWhichTheAdaptersNonSparkReferencesLoad() throws Exception {
    Result r = Scripts.run(tmp, Map.of(), "bin/strata", "classpath", "shuffle");
    assertThat(r.exit()).as(r.err()).isZero();
    String line = r.out().strip();
    assertThat(line).doesNotContain("\n").isNotEmpty();
    List<Path> entries = new ArrayList<>();
    for (String e : line.split(":")) {
      Path p = Path.of(e);
      assertThat(p).as("classpath entry %s", e).isAbsolute().isRegularFile();
      assertThat(p.getFileName().toString()).endsWith(".jar");
      entries.add(p);
    }
    assertThat(entries).extracting(p -> p.getFileName().toString())
        .containsExactly("strata-shuffle.jar", "strata-client.jar");

    Path adapter = null;
    for (Path p : entries) {
      try (JarFile jar = new JarFile(p.toFile())) {
        if (jar.getEntry(MANAGER) != null) {
          assertThat(adapter).as("%s in two jars: %s and %s", MANAGER, adapter, p).isNull();
          adapter = p;
        }
      }
    }
    assertThat(adapter).as("%s in none of %s", MANAGER, entries).isNotNull();

    Set<String> needed = new TreeSet<>();
    try (JarFile jar = new JarFile(adapter.toFile())) {
      for (JarEntry e : (Iterable<JarEntry>) jar.stream()::iterator) {
        if (e.getName().startsWith("io/strata/shuffle/") && e.getName().endsWith(".class")) {
          for (String name : referencedClasses(jar.getInputStream(e).readAllBytes())) {
            if (PROVIDED.stream().noneMatch(name::startsWith)) {
              needed.add(name);
            }
          }
        }
      }
    }
    assertThat(needed).contains("io/strata/client/FileSystem", "io/strata/shaded/io/grpc/ManagedChannel",
        "io/strata/shaded/com/google/protobuf/ByteString", "io/strata/proto/PushRequest");
    assertThat(needed).allSatisfy(n -> assertThat(RELOCATED).noneMatch(n::startsWith));

    URL[] urls = new URL[entries.size()];
    for (int i = 0; i < urls.length; i++) {
      urls[i] = entries.get(i).toUri().toURL();
    }
    List<String> missing = new ArrayList<>();
    try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
      for (String name : needed) {
        try {
          Class<?> c = Class.forName(name.replace('/', '.'), false, loader);
          assertThat(c.getClassLoader()).as(name).isSameAs(loader);
        } catch (ClassNotFoundException | LinkageError e) {
          missing.add(name + ": " + e);
        }
      }
    }
    assertThat(missing).as("of %d classes the adapter needs", needed.size()).isEmpty();
  }

  /** The classes a class file names: its constant pool's Class entries and the types in its descriptors. */
  private static Set<String> referencedClasses(byte[] classFile) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
    assertThat(in.readInt()).isEqualTo(0xCAFEBABE);
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    List<Integer> classIndexes = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 7 -> classIndexes.add(in.readUnsignedShort());
        case 8, 16, 19, 20 -> in.skipBytes(2);
        case 15 -> in.skipBytes(3);
        case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
        case 5, 6 -> {
          in.skipBytes(8);
          i++;
        }
        default -> throw new IOException("constant pool tag " + tag + " at entry " + i);
      }
    }
    Set<String> names = new TreeSet<>();
    for (int idx : classIndexes) {
      if (!utf8[idx].startsWith("[")) {
        names.add(utf8[idx]);
      }
    }
    for (String s : utf8) {
      if (s != null) {
        Matcher m = DESCRIPTOR_CLASS.matcher(s);
        while (m.find()) {
          names.add(m.group(1));
        }
      }
    }
    return names;
  }
}
