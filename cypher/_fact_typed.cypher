(size($typed.edge_types) = 0 OR r.name IN $typed.edge_types)
AND all(a IN $typed.edge_attributes WHERE r[a.name] IN a.values)
AND ((size($typed.types) = 0 AND size($typed.attributes) = 0)
     OR any(e IN [startNode(r), endNode(r)]
            WHERE (size($typed.types) = 0 OR any(l IN labels(e) WHERE l IN $typed.types))
              AND all(a IN $typed.attributes WHERE e[a.name] IN a.values)))
